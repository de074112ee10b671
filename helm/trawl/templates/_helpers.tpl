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

{{- /* The roles that read or write WARC_DIR (the configuration table's roles of WARC_DIR): they mount the web-archive volume. */ -}}
{{- define "trawl.warcRoles" -}}api frontier fetch-render render{{- end -}}

{{- define "trawl.warcClaim" -}}{{ .Values.warc.existingClaim | default (printf "%s-warc" (include "trawl.name" .)) }}{{- end -}}
