{{/*
Mutual TLS, the access policy and the Kafka users of the components (values `tls`, `auth`,
`kafkaConnection.users`, `kafka.strimziUsers`). Every component's certificate sits in a Secret with
tls.crt, tls.key and ca.crt (the layout cert-manager writes), mounted read-only at the paths below.
*/}}

{{- define "weaverbird.tlsMountPath" -}}/etc/weaverbird/tls{{- end }}
{{- define "weaverbird.authMountPath" -}}/etc/weaverbird/auth{{- end }}

{{/* Components that run as WeaverBird pods with an identity (the Ray embedder serves plaintext). */}}
{{- define "weaverbird.tlsComponents" -}}
{{- $out := list }}
{{- range $c := list "embedder" "retriever" "generator" "orchestrator" "ingester" "gateway" }}
{{- $v := index $.Values $c }}
{{- if and $v.enabled (not (and (eq $c "embedder") $v.rayService.enabled)) }}
{{- $out = append $out $c }}
{{- end }}
{{- end }}
{{- toYaml $out }}
{{- end }}

{{/* Where certificates come from: certManager, existingSecrets, selfSigned, or "" (none chosen). */}}
{{- define "weaverbird.tlsSource" -}}
{{- $t := .Values.tls }}
{{- $existing := false }}
{{- range $c, $name := ($t.existingSecrets | default dict) }}{{ if $name }}{{ $existing = true }}{{ end }}{{ end }}
{{- if $t.certManager.enabled }}certManager
{{- else if $existing }}existingSecrets
{{- else if $t.selfSigned.enabled }}selfSigned
{{- end }}
{{- end }}

{{/* Secret of one component's certificate. Call with (dict "root" $ "component" "orchestrator"). */}}
{{- define "weaverbird.tlsSecretName" -}}
{{- $given := index (.root.Values.tls.existingSecrets | default dict) .component }}
{{- if and $given (eq (include "weaverbird.tlsSource" .root) "existingSecrets") }}
{{- $given }}
{{- else }}
{{- printf "%s-tls" (include "weaverbird.componentName" .) }}
{{- end }}
{{- end }}

{{/* DNS names of a component's certificate: its Service's short and qualified names. */}}
{{- define "weaverbird.tlsDnsNames" -}}
{{- $svc := include "weaverbird.componentName" . }}
{{- $ns := .root.Release.Namespace }}
{{- toYaml (list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.%s" $svc $ns .root.Values.tls.clusterDomain)) }}
{{- end }}

{{- define "weaverbird.tlsCaSecretName" -}}
{{- printf "%s-tls-ca" (include "weaverbird.fullname" .) }}
{{- end }}

{{/*
The chart's own CA and certificates (tls.selfSigned), as YAML: {ca: {tls.crt, tls.key}, <component>:
{tls.crt, tls.key, ca.crt}}, every value base64. Secrets already in the cluster are reused (lookup), so
`helm upgrade` keeps the certificates; a component without one gets a new certificate from the same CA.
Generated once per render and kept in .Values, because the Secrets and the pods' checksums must agree.
*/}}
{{- define "weaverbird.selfSignedTls" -}}
{{- if not (hasKey .Values.tls "_generated") }}
{{- $ns := .Release.Namespace }}
{{- $days := int .Values.tls.selfSigned.validityDays }}
{{- $caSecret := lookup "v1" "Secret" $ns (include "weaverbird.tlsCaSecretName" .) | default dict }}
{{- $caData := $caSecret.data | default dict }}
{{- $ca := dict }}
{{- $reuse := false }}
{{- if and (index $caData "tls.crt") (index $caData "tls.key") }}
{{- $ca = buildCustomCert (index $caData "tls.crt") (index $caData "tls.key") }}
{{- $reuse = true }}
{{- else }}
{{- $ca = genCA "weaverbird-ca" $days }}
{{- end }}
{{- $caCrt := $ca.Cert | b64enc }}
{{- $out := dict "ca" (dict "tls.crt" $caCrt "tls.key" ($ca.Key | b64enc)) }}
{{- range $c := include "weaverbird.tlsComponents" . | fromYamlArray }}
{{- $ctx := dict "root" $ "component" $c }}
{{- $old := (lookup "v1" "Secret" $ns (include "weaverbird.tlsSecretName" $ctx) | default dict).data | default dict }}
{{- if and $reuse (index $old "tls.crt") (index $old "tls.key") (eq (index $old "ca.crt" | default "") $caCrt) }}
{{- $_ := set $out $c (dict "tls.crt" (index $old "tls.crt") "tls.key" (index $old "tls.key") "ca.crt" $caCrt) }}
{{- else }}
{{- $cert := genSignedCert $c nil (include "weaverbird.tlsDnsNames" $ctx | fromYamlArray) $days $ca }}
{{- $_ := set $out $c (dict "tls.crt" ($cert.Cert | b64enc) "tls.key" ($cert.Key | b64enc) "ca.crt" $caCrt) }}
{{- end }}
{{- end }}
{{- $_ := set .Values.tls "_generated" $out }}
{{- end }}
{{- toYaml .Values.tls._generated }}
{{- end }}

{{/* Name of the Secret that holds policy.json. */}}
{{- define "weaverbird.authSecretName" -}}
{{- .Values.auth.existingSecret | default (printf "%s-auth-policy" (include "weaverbird.fullname" .)) }}
{{- end }}

{{/* The access policy rendered from values (weaverbird_common.auth's format): digests, never tokens. */}}
{{- define "weaverbird.authPolicy" -}}
{{- $a := .Values.auth }}
{{- $tokens := list }}
{{- range $a.tokens | default list }}
{{- $tokens = append $tokens (dict "name" .name "sha256" (lower .sha256) "roles" .roles) }}
{{- end }}
{{- $certs := dict }}
{{- range $cn, $roles := ($a.certificates | default dict) }}
{{- if $roles }}{{ $_ := set $certs $cn $roles }}{{ end }}
{{- end }}
{{- dict "tokens" $tokens "certificates" $certs | toPrettyJson }}
{{- end }}

{{/*
Settings of one component for TLS and authentication (merged into its managed env): the certificate
files, the health port the probes use, the policy file.
*/}}
{{- define "weaverbird.securityEnv" -}}
{{- $root := .root }}
{{- $c := .component }}
{{- $p := include "weaverbird.envPrefix" $c }}
{{- $env := dict }}
{{- if $root.Values.tls.enabled }}
{{- $dir := include "weaverbird.tlsMountPath" $root }}
{{- $_ := set $env (printf "%s_TLS_CERT_FILE" $p) (printf "%s/tls.crt" $dir) }}
{{- $_ := set $env (printf "%s_TLS_KEY_FILE" $p) (printf "%s/tls.key" $dir) }}
{{- $_ := set $env (printf "%s_TLS_CA_FILE" $p) (printf "%s/ca.crt" $dir) }}
{{- if ne $c "gateway" }}
{{- $_ := set $env (printf "%s_HEALTH_PORT" $p) (toString $root.Values.global.healthPort) }}
{{- $entry := has $c (list "orchestrator" "ingester") }}
{{- $_ := set $env (printf "%s_TLS_REQUIRE_CLIENT_CERT" $p) (toString (or (not $entry) $root.Values.tls.entryPointsRequireClientCert)) }}
{{- end }}
{{- end }}
{{- if and $root.Values.auth.enabled (ne $c "gateway") }}
{{- $_ := set $env (printf "%s_AUTH_POLICY_FILE" $p) (printf "%s/policy.json" (include "weaverbird.authMountPath" $root)) }}
{{- end }}
{{- toYaml $env }}
{{- end }}

{{/* Volumes of one component's certificate and policy, as a YAML list. */}}
{{- define "weaverbird.securityVolumes" -}}
{{- $root := .root }}
{{- $out := list }}
{{- if $root.Values.tls.enabled }}
{{- /* 0440: readable by the pod's group (fsGroup) only. */}}
{{- $out = append $out (dict "name" "tls" "secret" (dict "secretName" (include "weaverbird.tlsSecretName" .) "defaultMode" 288 "items" (list (dict "key" "tls.crt" "path" "tls.crt") (dict "key" "tls.key" "path" "tls.key") (dict "key" "ca.crt" "path" "ca.crt")))) }}
{{- end }}
{{- if and $root.Values.auth.enabled (ne .component "gateway") }}
{{- $out = append $out (dict "name" "auth-policy" "secret" (dict "secretName" (include "weaverbird.authSecretName" $root) "defaultMode" 288 "items" (list (dict "key" "policy.json" "path" "policy.json")))) }}
{{- end }}
{{- toYaml $out }}
{{- end }}

{{- define "weaverbird.securityMounts" -}}
{{- $root := .root }}
{{- $out := list }}
{{- if $root.Values.tls.enabled }}
{{- $out = append $out (dict "name" "tls" "mountPath" (include "weaverbird.tlsMountPath" $root) "readOnly" true) }}
{{- end }}
{{- if and $root.Values.auth.enabled (ne .component "gateway") }}
{{- $out = append $out (dict "name" "auth-policy" "mountPath" (include "weaverbird.authMountPath" $root) "readOnly" true) }}
{{- end }}
{{- toYaml $out }}
{{- end }}

{{/*
Pod annotations that roll the pods when what they read once at start changes: the chart's own
certificates and the policy it renders. (cert-manager's renewals and existing Secrets are outside
the chart's view: see values.yaml `tls`.)
*/}}
{{- define "weaverbird.securityChecksums" -}}
{{- $root := .root }}
{{- $out := dict }}
{{- if and $root.Values.tls.enabled (eq (include "weaverbird.tlsSource" $root) "selfSigned") }}
{{- $_ := set $out "checksum/tls" (index (include "weaverbird.selfSignedTls" $root | fromYaml) .component | toJson | sha256sum) }}
{{- end }}
{{- if and $root.Values.auth.enabled (not $root.Values.auth.existingSecret) (ne .component "gateway") }}
{{- $_ := set $out "checksum/auth-policy" (include "weaverbird.authPolicy" $root | sha256sum) }}
{{- end }}
{{- toYaml $out }}
{{- end }}

{{/*
SASL login of the orchestrator or the ingester, as YAML {username, secretName, secretKey, optional}:
kafkaConnection.users.<c>, else the KafkaUser the chart renders (kafka.strimziUsers), else the shared
saslUsername and secrets' kafka-sasl-password. secretName is empty when no password is available.
*/}}
{{- define "weaverbird.kafkaLogin" -}}
{{- $root := .root }}
{{- $k := $root.Values.kafkaConnection }}
{{- $own := index ($k.users | default dict) .component | default dict }}
{{- $ownSecret := $own.passwordSecret | default dict }}
{{- $strimzi := false }}
{{- with $root.Values.kafka.strimziUsers }}{{ $strimzi = .enabled | default false }}{{ end }}
{{- $kafkaUser := include "weaverbird.componentName" . }}
{{- $login := dict "username" ($own.username | default (ternary $kafkaUser $k.saslUsername $strimzi)) }}
{{- if $ownSecret.name }}
{{- $_ := set $login "secretName" $ownSecret.name }}
{{- $_ := set $login "secretKey" ($ownSecret.key | default "password") }}
{{- else if $strimzi }}
{{- /* Strimzi's User Operator writes the password to a Secret named after the KafkaUser. */}}
{{- $_ := set $login "secretName" $kafkaUser }}
{{- $_ := set $login "secretKey" "password" }}
{{- else if include "weaverbird.hasSecret" (dict "root" $root "value" "kafkaSaslPassword") }}
{{- $_ := set $login "secretName" (include "weaverbird.secretName" $root) }}
{{- $_ := set $login "secretKey" "kafka-sasl-password" }}
{{- else }}
{{- $_ := set $login "secretName" "" }}
{{- $_ := set $login "secretKey" "" }}
{{- end }}
{{- toYaml $login }}
{{- end }}

{{/* The consumer group of the ingesters (INGESTER_KAFKA__GROUP_ID, else the service's default). */}}
{{- define "weaverbird.kafkaGroupId" -}}
{{- index (.Values.ingester.env | default dict) "INGESTER_KAFKA__GROUP_ID" | default "weaverbird-ingester" }}
{{- end }}

{{/* Checks of the values above that the schema cannot express. */}}
{{- define "weaverbird.validateSecurity" -}}
{{- $t := .Values.tls }}
{{- if $t.enabled }}
{{- $source := include "weaverbird.tlsSource" . }}
{{- $existing := list }}
{{- range $c, $name := ($t.existingSecrets | default dict) }}{{ if $name }}{{ $existing = append $existing $c }}{{ end }}{{ end }}
{{- if not $source }}
{{- fail "tls.enabled needs a certificate source: tls.certManager.enabled (with issuerRef), tls.existingSecrets.<component>, or tls.selfSigned.enabled" }}
{{- end }}
{{- if and $t.certManager.enabled $existing }}
{{- fail (printf "tls: set either tls.certManager.enabled or tls.existingSecrets (%s), not both" (join ", " $existing)) }}
{{- end }}
{{- if and $t.certManager.enabled (not $t.certManager.issuerRef.name) }}
{{- fail "tls.certManager.enabled needs tls.certManager.issuerRef.name (a CA Issuer or ClusterIssuer, so that the Secrets carry ca.crt)" }}
{{- end }}
{{- if eq $source "existingSecrets" }}
{{- range $c := include "weaverbird.tlsComponents" . | fromYamlArray }}
{{- if not (index $t.existingSecrets $c) }}
{{- fail (printf "tls.existingSecrets: %s has no Secret; name one for every enabled component (%s)" $c (include "weaverbird.tlsComponents" $ | fromYamlArray | join ", ")) }}
{{- end }}
{{- end }}
{{- end }}
{{- if and .Values.embedder.enabled .Values.embedder.rayService.enabled }}
{{- fail "tls.enabled: the Ray Serve embedder (embedder.rayService.enabled) serves plaintext gRPC, which its TLS callers cannot reach; set tls.enabled=false (and rely on a mesh) or use the embedder Deployment" }}
{{- end }}
{{- if eq (int .Values.global.healthPort) (int .Values.global.grpcPort) }}
{{- fail "global.healthPort must differ from global.grpcPort (it serves plaintext health checks beside the TLS port)" }}
{{- end }}
{{- if eq (int .Values.global.healthPort) (int .Values.global.metricsPort) }}
{{- fail "global.healthPort must differ from global.metricsPort" }}
{{- end }}
{{- end }}
{{- if and .Values.auth.enabled (not $t.enabled) }}
{{- fail "auth.enabled needs tls.enabled: the services prove who they are to each other with their certificates" }}
{{- end }}
{{- if and .Values.auth.enabled (not .Values.auth.existingSecret) }}
{{- $names := list }}
{{- range .Values.auth.tokens | default list }}
{{- if has .name $names }}
{{- fail (printf "auth.tokens: the name %q appears twice" .name) }}
{{- end }}
{{- $names = append $names .name }}
{{- end }}
{{- end }}
{{- $gw := .Values.gateway.defaultTokenSecret | default dict }}
{{- if and $gw.name (not .Values.tls.enabled) }}
{{- fail "gateway.defaultTokenSecret needs tls.enabled (a bearer token must not travel in plaintext)" }}
{{- end }}
{{- $s := .Values.kafka.strimziUsers | default dict }}
{{- if $s.enabled }}
{{- $k := .Values.kafkaConnection }}
{{- if not $s.clusterName }}
{{- fail "kafka.strimziUsers.enabled needs kafka.strimziUsers.clusterName (the Kafka resource, label strimzi.io/cluster)" }}
{{- end }}
{{- if not (and (hasPrefix "SASL_" $k.securityProtocol) (eq $k.saslMechanism "SCRAM-SHA-512")) }}
{{- fail "kafka.strimziUsers.enabled makes SCRAM-SHA-512 users: set kafkaConnection.securityProtocol to SASL_SSL (or SASL_PLAINTEXT) and kafkaConnection.saslMechanism to SCRAM-SHA-512" }}
{{- end }}
{{- end }}
{{- end }}
