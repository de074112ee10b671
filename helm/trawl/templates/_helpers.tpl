{{- define "trawl.name" -}}{{ .Release.Name | trunc 50 | trimSuffix "-" }}{{- end -}}

{{- define "trawl.labels" -}}
app.kubernetes.io/name: trawl
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "trawl.selector" -}}
app.kubernetes.io/name: trawl
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .role }}
{{- end -}}

{{- define "trawl.secretName" -}}{{ .Values.existingSecret | default (printf "%s-secrets" (include "trawl.name" .)) }}{{- end -}}
