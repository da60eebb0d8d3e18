{{- define "defines.who" -}}from sub/_c{{- end }}
{{- define "defines.deep" -}}deep only{{- end }}
