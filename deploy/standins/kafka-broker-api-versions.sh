#!/bin/bash
# What the official image's script of that name runs (compose.yaml's healthcheck calls it).
exec java -Xmx128m -XX:TieredStopAtLevel=1 -cp "/opt/kafka/libs/*" kafka.admin.BrokerApiVersionsCommand "$@"
