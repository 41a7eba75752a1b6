{{/* Names and labels. */}}
{{- define "csg.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "csg.selectorLabels" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "csg.labels" -}}
{{ include "csg.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end -}}

{{- define "csg.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "csg.secretName" -}}
{{- .Values.secrets.existingSecret | default (printf "%s-secrets" (include "csg.fullname" .)) -}}
{{- end -}}

{{- define "csg.detectionAddress" -}}
{{ include "csg.fullname" . }}-detection:{{ .Values.detection.port }}
{{- end -}}

{{/* Refuses settings that cannot work: no database, or several processes without a shared Redis. */}}
{{- define "csg.validate" -}}
{{- if not .Values.secrets.existingSecret -}}
{{- if not .Values.secrets.DATABASE_URL -}}
{{- fail "secrets.DATABASE_URL is required (or secrets.existingSecret): the embedded database is single-instance only" -}}
{{- end -}}
{{- if and (not .Values.secrets.REDIS_URL) (or (gt (int .Values.gateway.replicas) 1) .Values.sensor.enabled) -}}
{{- fail "secrets.REDIS_URL is required with more than one gateway replica or with the sensor: without it each process enforces the limits alone" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Pod-level settings every Deployment shares. */}}
{{- define "csg.podCommon" -}}
securityContext:
  {{- toYaml .root.Values.podSecurityContext | nindent 2 }}
terminationGracePeriodSeconds: {{ .root.Values.terminationGracePeriodSeconds }}
topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: kubernetes.io/hostname
    whenUnsatisfiable: ScheduleAnyway
    labelSelector:
      matchLabels:
        {{- include "csg.selectorLabels" . | nindent 8 }}
volumes:
  - name: data
    emptyDir: {}
  - name: tmp
    emptyDir: {}
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .root.Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .root.Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Container-level settings every service shares. */}}
{{- define "csg.containerCommon" -}}
image: {{ include "csg.image" .root }}
imagePullPolicy: {{ .root.Values.image.pullPolicy }}
securityContext:
  {{- toYaml .root.Values.containerSecurityContext | nindent 2 }}
volumeMounts:
  - name: data
    mountPath: /data
  - name: tmp
    mountPath: /tmp
{{- end -}}

{{/*
A gateway or sensor Deployment: `node dist/main.js <component>` on PostgreSQL and Redis, dialing detection.
Arguments: root, component (gateway | sensor), values (.Values.gateway | .Values.sensor), portEnv (PORT | SENSOR_PORT).
*/}}
{{- define "csg.httpDeployment" -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "csg.fullname" .root }}-{{ .component }}
  labels:
    {{- include "csg.labels" . | nindent 4 }}
spec:
  replicas: {{ .values.replicas }}
  selector:
    matchLabels:
      {{- include "csg.selectorLabels" . | nindent 6 }}
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxUnavailable: 0
      maxSurge: 1
  template:
    metadata:
      labels:
        {{- include "csg.labels" . | nindent 8 }}
      annotations:
        checksum/config: {{ include (print .root.Template.BasePath "/configmap.yaml") .root | sha256sum }}
        checksum/secret: {{ include (print .root.Template.BasePath "/secret.yaml") .root | sha256sum }}
    spec:
      {{- include "csg.podCommon" . | nindent 6 }}
      containers:
        - name: {{ .component }}
          {{- include "csg.containerCommon" . | nindent 10 }}
          args: [{{ .component | quote }}]
          envFrom:
            - configMapRef:
                name: {{ include "csg.fullname" .root }}-config
            - secretRef:
                name: {{ include "csg.secretName" .root }}
          env:
            - name: {{ .portEnv }}
              value: {{ .values.port | quote }}
            - name: DETECTION_ADDRESS
              value: {{ include "csg.detectionAddress" .root | quote }}
            {{- range $name, $value := .values.env }}
            - name: {{ $name }}
              value: {{ $value | quote }}
            {{- end }}
          ports:
            - name: http
              containerPort: {{ .values.port }}
          startupProbe:
            httpGet: { path: /health/live, port: http }
            periodSeconds: 1
            failureThreshold: 60
          livenessProbe:
            httpGet: { path: /health/live, port: http }
            periodSeconds: 10
            timeoutSeconds: 2
            failureThreshold: 3
          readinessProbe:
            httpGet: { path: /health/ready, port: http }
            periodSeconds: 2
            timeoutSeconds: 2
            failureThreshold: 1
          resources:
            {{- toYaml .values.resources | nindent 12 }}
{{- end -}}

{{/* A ClusterIP (or other type) Service in front of a gateway or sensor Deployment. */}}
{{- define "csg.httpService" -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "csg.fullname" .root }}-{{ .component }}
  labels:
    {{- include "csg.labels" . | nindent 4 }}
spec:
  type: {{ .values.service.type }}
  selector:
    {{- include "csg.selectorLabels" . | nindent 4 }}
  ports:
    - name: http
      port: {{ .values.service.port }}
      targetPort: http
{{- end -}}
