{{/*
The Deployment, Service, ConfigMap, HPA and PDB that every WeaverBird service shares. Each
<component>.yaml template calls these with its own extra volumes and rollout strategy:
  (dict "root" $ "component" "retriever" "volumes" list "volumeMounts" list "strategy" dict)
A component that is not a gRPC service (the HTTP gateway) also passes "containerPorts" and
"servicePorts" (port lists) and "probes" (rendered probe YAML) in place of the gRPC ones.
*/}}

{{- define "weaverbird.configMap" -}}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "weaverbird.componentName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "weaverbird.labels" . | nindent 4 }}
data:
  {{- include "weaverbird.settingsEnv" . | nindent 2 }}
{{- end }}

{{- define "weaverbird.deployment" -}}
{{- $root := .root }}
{{- $v := index $root.Values .component }}
{{- $g := $root.Values.global }}
{{- $termination := include "weaverbird.terminationGrace" . | int }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "weaverbird.componentName" . }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "weaverbird.labels" . | nindent 4 }}
spec:
  {{- if not $v.autoscaling.enabled }}
  replicas: {{ $v.replicaCount }}
  {{- end }}
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      {{- include "weaverbird.selectorLabels" . | nindent 6 }}
  strategy:
    {{- if .strategy }}
    {{- toYaml .strategy | nindent 4 }}
    {{- else }}
    # New pods become ready before old ones stop taking traffic.
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 1
      maxUnavailable: 0
    {{- end }}
  template:
    metadata:
      labels:
        {{- include "weaverbird.labels" . | nindent 8 }}
      annotations:
        # Settings are read once at start: a changed ConfigMap or Secret must roll the pods.
        checksum/config: {{ include "weaverbird.settingsEnv" . | sha256sum }}
        {{- if and (not $root.Values.secrets.existingSecret) (include "weaverbird.secretData" $root) }}
        checksum/secret: {{ include "weaverbird.secretData" $root | sha256sum }}
        {{- end }}
        {{- with include "weaverbird.securityChecksums" . | fromYaml }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
        {{- with $v.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "weaverbird.serviceAccountName" $root }}
      automountServiceAccountToken: false
      # No <SERVICE>_PORT variables: the settings classes read their own prefixed names only.
      enableServiceLinks: false
      {{- with $g.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- include "weaverbird.podSecurityContext" (dict "root" $root "own" $v.podSecurityContext) | nindent 8 }}
      # preStop sleep + the server's shutdown grace, with room to spare (checked at render time).
      terminationGracePeriodSeconds: {{ $termination }}
      containers:
        - name: {{ .component }}
          image: {{ include "weaverbird.image" (dict "root" $root "image" $v.image) }}
          imagePullPolicy: {{ $v.image.pullPolicy | default $g.image.pullPolicy }}
          ports:
            {{- if .containerPorts }}
            {{- toYaml .containerPorts | nindent 12 }}
            {{- else }}
            - name: grpc
              containerPort: {{ $g.grpcPort }}
              protocol: TCP
            - name: metrics
              containerPort: {{ $g.metricsPort }}
              protocol: TCP
            {{- if $root.Values.tls.enabled }}
            # Plaintext grpc.health.v1 only, for the probes; no Service lists it.
            - name: health
              containerPort: {{ $g.healthPort }}
              protocol: TCP
            {{- end }}
            {{- end }}
          envFrom:
            - configMapRef:
                name: {{ include "weaverbird.componentName" . }}
          {{- with include "weaverbird.secretEnv" . | trim }}
          env:
            {{- . | nindent 12 }}
          {{- end }}
          {{- .probes | default (include "weaverbird.grpcProbes" (dict "root" $root "probes" $v.probes)) | trim | nindent 10 }}
          lifecycle:
            preStop:
              # Keeps serving while the endpoint removal reaches every kube-proxy and client.
              exec:
                command: ["sleep", "{{ $g.preStopSleepSeconds }}"]
          resources:
            {{- toYaml $v.resources | nindent 12 }}
          securityContext:
            {{- include "weaverbird.containerSecurityContext" (dict "root" $root "own" $v.containerSecurityContext) | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
            {{- with .volumeMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
            {{- with include "weaverbird.securityMounts" . | fromYamlArray }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: {{ $v.tmpSizeLimit | default $g.tmpSizeLimit }}
        {{- with .volumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
        {{- with include "weaverbird.securityVolumes" . | fromYamlArray }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with $v.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      affinity:
        {{- include "weaverbird.affinity" (dict "root" $root "component" .component "affinity" $v.affinity) | trim | nindent 8 }}
      {{- with $v.topologySpreadConstraints }}
      topologySpreadConstraints:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end }}

{{/* ClusterIP Service: gRPC for peers and clients, metrics for Prometheus (or the given servicePorts). */}}
{{- define "weaverbird.service" -}}
{{- $root := .root }}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "weaverbird.componentName" . }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "weaverbird.labels" . | nindent 4 }}
  {{- with $root.Values.service.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  type: {{ $root.Values.service.type }}
  selector:
    {{- include "weaverbird.selectorLabels" . | nindent 4 }}
    {{- with .extraSelector }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  ports:
    {{- if .servicePorts }}
    {{- toYaml .servicePorts | nindent 4 }}
    {{- else }}
    - name: grpc
      port: {{ $root.Values.global.grpcPort }}
      targetPort: {{ .targetPort | default "grpc" }}
      protocol: TCP
      appProtocol: kubernetes.io/h2c
    {{- if not .noMetrics }}
    - name: metrics
      port: {{ $root.Values.global.metricsPort }}
      targetPort: metrics
      protocol: TCP
    {{- end }}
    {{- end }}
{{- end }}

{{- define "weaverbird.hpa" -}}
{{- $v := index .root.Values .component }}
{{- if $v.autoscaling.enabled }}
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ include "weaverbird.componentName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "weaverbird.labels" . | nindent 4 }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ include "weaverbird.componentName" . }}
  minReplicas: {{ $v.autoscaling.minReplicas }}
  maxReplicas: {{ $v.autoscaling.maxReplicas }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ $v.autoscaling.targetCPUUtilizationPercentage }}
  behavior:
    # Answers stream for tens of seconds: scale down slowly so drains do not pile up.
    scaleDown:
      stabilizationWindowSeconds: 300
      policies:
        - type: Pods
          value: 1
          periodSeconds: 60
{{- end }}
{{- end }}

{{/* A PDB only where it can be satisfied: with more than one replica (or an HPA). */}}
{{- define "weaverbird.pdb" -}}
{{- $v := index .root.Values .component }}
{{- $scaled := and (hasKey $v "autoscaling") $v.autoscaling.enabled }}
{{- if and $v.podDisruptionBudget.enabled (or $scaled (gt (int $v.replicaCount) 1)) }}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "weaverbird.componentName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "weaverbird.labels" . | nindent 4 }}
spec:
  maxUnavailable: {{ $v.podDisruptionBudget.maxUnavailable }}
  selector:
    matchLabels:
      {{- include "weaverbird.selectorLabels" . | nindent 6 }}
      {{- with .extraSelector }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
{{- end }}
{{- end }}

{{/* Everything one WeaverBird service needs, separated into documents. */}}
{{- define "weaverbird.component" -}}
{{ include "weaverbird.configMap" . }}
---
{{ include "weaverbird.deployment" . }}
---
{{ include "weaverbird.service" . }}
{{- with include "weaverbird.hpa" . | trim }}
---
{{ . }}
{{- end }}
{{- with include "weaverbird.pdb" . | trim }}
---
{{ . }}
{{- end }}
{{- end }}
