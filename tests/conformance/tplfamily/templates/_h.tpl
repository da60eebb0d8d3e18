{{- define "tplfamily.helper" -}}helper sees {{ .Values.name }}{{- end }}
