{{- define "lib.label" -}}
lib: "yes"
{{- end -}}
