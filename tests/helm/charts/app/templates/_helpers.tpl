{{- define "app.fullname" -}}
{{ .Release.Name }}-{{ .Chart.Name }}
{{- end -}}
{{- define "app.labels" -}}
app: {{ include "app.fullname" . }}
chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{ include "lib.label" . }}
{{- end -}}
