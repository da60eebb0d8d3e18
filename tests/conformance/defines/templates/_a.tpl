{{- define "defines.who" -}}from _a{{- end }}
{{- define "defines.greet" -}}hi {{ .Values.name }}{{- end }}
{{- define "defines.count" -}}
{{- if gt (int .) 0 -}}
{{ . }} {{ include "defines.count" (sub (int .) 1) }}
{{- else -}}
liftoff
{{- end -}}
{{- end }}
