{{/*
_helpers.tpl - the named templates every object uses: names, labels, the
Secret's name, and the pod (one definition for both shapes).
*/}}
{{- define "detm.fullname" -}}
{{ .Release.Name }}-detm
{{- end }}

{{- define "detm.selectorLabels" -}}
app.kubernetes.io/name: detm
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "detm.labels" -}}
{{ include "detm.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end }}

{{- define "detm.secretName" -}}
{{- if .Values.token.existingSecret -}}
{{ .Values.token.existingSecret }}
{{- else -}}
{{ include "detm.fullname" . }}-token
{{- end -}}
{{- end }}

{{- define "detm.podAnnotations" -}}
{{- if .Values.metrics.scrape -}}
prometheus.io/scrape: "true"
prometheus.io/port: {{ .Values.port | quote }}
prometheus.io/path: /metrics
{{- else -}}
{}
{{- end -}}
{{- end }}

{{/* The pod: detmd alone, non-root, probes on /livez and /readyz, drain on preStop. */}}
{{- define "detm.podSpec" -}}
automountServiceAccountToken: false
terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}
securityContext:
  runAsNonRoot: true
  runAsUser: 10001
  runAsGroup: 10001
  fsGroup: 10001
  seccompProfile:
    type: RuntimeDefault
{{- if .Values.nodeSelector }}
nodeSelector: {{ toYaml .Values.nodeSelector | nindent 2 }}
{{- end }}
{{- if .Values.tolerations }}
tolerations: {{ toYaml .Values.tolerations | nindent 2 }}
{{- end }}
containers:
  - name: detmd
    image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
    imagePullPolicy: {{ .Values.image.pullPolicy }}
    env:
      - name: ACU_TOKEN
        valueFrom:
          secretKeyRef:
            name: {{ include "detm.secretName" . }}
            key: {{ .Values.token.secretKey }}
      - name: ACU_DAEMON_HOST
        value: "0.0.0.0"
      - name: ACU_DAEMON_PORT
        value: {{ .Values.port | quote }}
      - name: ACU_DATA_DIR
        value: /data
      - name: ACU_MAX_DISPLAYS
        value: {{ .Values.maxDisplays | quote }}
      - name: ACU_DISPLAY_RESOLUTION
        value: {{ .Values.displayResolution | quote }}
      {{- if eq .Values.shape "statefulset" }}
      {{- if .Values.fleet.peers }}
      # Every pod's address, ready or not (a draining pod still holds its
      # tasks): GET /api/fleet/tasks and forwarding by task id (deploy.md "Routing").
      - name: ACU_PEERS
        value: "http://{{ include "detm.fullname" . }}-peers.{{ .Release.Namespace }}.svc:{{ .Values.port }}"
      - name: ACU_PEERS_RESOLVE_ALL
        value: "1"
      {{- end }}
      {{- end }}
      {{- if .Values.extraEnv }}
      {{- toYaml .Values.extraEnv | nindent 6 }}
      {{- end }}
    ports:
      - name: http
        containerPort: {{ .Values.port }}
        protocol: TCP
    startupProbe:
      httpGet:
        path: /livez
        port: http
      periodSeconds: {{ .Values.probes.startup.periodSeconds }}
      timeoutSeconds: {{ .Values.probes.startup.timeoutSeconds }}
      failureThreshold: {{ .Values.probes.startup.failureThreshold }}
    livenessProbe:
      httpGet:
        path: /livez
        port: http
      periodSeconds: {{ .Values.probes.liveness.periodSeconds }}
      timeoutSeconds: {{ .Values.probes.liveness.timeoutSeconds }}
      failureThreshold: {{ .Values.probes.liveness.failureThreshold }}
    readinessProbe:
      httpGet:
        path: /readyz
        port: http
      periodSeconds: {{ .Values.probes.readiness.periodSeconds }}
      timeoutSeconds: {{ .Values.probes.readiness.timeoutSeconds }}
      failureThreshold: {{ .Values.probes.readiness.failureThreshold }}
    lifecycle:
      preStop:
        exec:
          command:
            - /bin/sh
            - -c
            - >-
              curl -sS -o /dev/null -X POST
              -H "Authorization: Bearer $ACU_TOKEN"
              "http://127.0.0.1:{{ .Values.port }}/api/drain?wait={{ .Values.drain.waitSeconds }}"
              || true
    resources: {{ toYaml .Values.resources | nindent 6 }}
    securityContext:
      allowPrivilegeEscalation: false
      capabilities:
        drop: ["ALL"]
    volumeMounts:
      - name: data
        mountPath: /data
      - name: tmp
        mountPath: /tmp
volumes:
  - name: tmp
    emptyDir: {}
{{- end }}
