{{- define "defines.who" -}}from _b{{- end }}
