"""Kafka connection and topic settings shared by the ingest publisher and consumer.

A plain pydantic model rather than a settings class: each service embeds it in its own settings
(env prefix and nesting chosen there), so the environment is still read once, at the process edge.
The kwargs builders target kafka-python; this module does not import it, so the common library does
not depend on a Kafka client.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator

SecurityProtocol = Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]
SaslMechanism = Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]

# Record batch and protocol overhead on top of one value, so a value of exactly max_message_bytes
# still fits in a produce request.
_REQUEST_OVERHEAD_BYTES = 64 * 1024


class KafkaSettings(BaseModel):
    """Where the cluster is, how to authenticate, which topics and group the ingest path uses."""

    bootstrap_servers: str = Field(description="Comma-separated host:port list of bootstrap brokers.")
    ingest_topic: str = Field("weaverbird.ingest.v1", min_length=1, description="Topic of web documents to add.")
    dead_letter_topic: str = Field(
        "weaverbird.ingest.dlq.v1", min_length=1, description="Topic of records the ingester gave up on."
    )
    group_id: str = Field("weaverbird-ingester", min_length=1, description="Consumer group of the ingesters.")
    client_id: str = Field("weaverbird", min_length=1, description="Client id reported to the brokers.")
    security_protocol: SecurityProtocol = Field("PLAINTEXT", description="Transport and authentication.")
    sasl_mechanism: SaslMechanism | None = Field(None, description="SASL mechanism for SASL_* protocols.")
    sasl_username: str | None = Field(None, description="SASL user name.")
    sasl_password: SecretStr | None = Field(None, description="SASL password (from a secret, never a default).")
    signing_key: SecretStr | None = Field(
        None,
        min_length=32,
        description="Shared secret of the trusted producers: they sign each ingest record (HMAC-SHA256 header) and "
        "the ingester dead-letters records without a valid signature. `weaverbird up` mints one; on a cluster "
        "with ACLs it is an extra check.",
    )
    ssl_cafile: str | None = Field(None, description="CA bundle that signed the brokers' certificates.")
    ssl_certfile: str | None = Field(None, description="Client certificate for mutual TLS.")
    ssl_keyfile: str | None = Field(None, description="Private key of ssl_certfile.")
    max_message_bytes: int = Field(
        1024 * 1024, ge=1024, description="Largest record value produced or accepted; larger ones are dead-lettered."
    )
    bootstrap_timeout_ms: int = Field(
        10_000, ge=100, description="How long a client waits for the cluster at start and for topic metadata."
    )
    session_timeout_ms: int = Field(
        30_000, ge=1000, description="Consumer liveness timeout; a dead ingester's partitions move after it."
    )
    heartbeat_interval_ms: int = Field(3_000, ge=100, description="Consumer heartbeat period (< session timeout / 3).")
    max_poll_records: int = Field(
        20, ge=1, description="Records per poll; each may need a fetch and embedding, so keep batches small."
    )
    max_poll_interval_ms: int = Field(
        600_000, ge=1000, description="Longest time to process one batch before the group evicts the consumer."
    )

    @field_validator("bootstrap_servers")
    @classmethod
    def _servers_present(cls, value: str) -> str:
        servers = [s.strip() for s in value.split(",") if s.strip()]
        if not servers:
            raise ValueError("at least one host:port is required")
        return ",".join(servers)

    @model_validator(mode="after")
    def _consistent(self) -> KafkaSettings:
        if self.security_protocol.startswith("SASL_"):
            if not (self.sasl_mechanism and self.sasl_username and self.sasl_password):
                raise ValueError(f"{self.security_protocol} needs sasl_mechanism, sasl_username and sasl_password")
        elif self.sasl_mechanism or self.sasl_username or self.sasl_password:
            raise ValueError(f"SASL credentials are set but security_protocol is {self.security_protocol}")
        if self.heartbeat_interval_ms * 3 > self.session_timeout_ms:
            raise ValueError("heartbeat_interval_ms must be at most a third of session_timeout_ms")
        if self.ingest_topic == self.dead_letter_topic:
            raise ValueError("ingest_topic and dead_letter_topic must differ")
        return self

    def _common_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "bootstrap_servers": self.bootstrap_servers.split(","),
            "client_id": self.client_id,
            "security_protocol": self.security_protocol,
            "bootstrap_timeout_ms": self.bootstrap_timeout_ms,
        }
        if self.sasl_mechanism:
            kwargs["sasl_mechanism"] = self.sasl_mechanism
            # kafka-python uses the "plain" names for SCRAM credentials as well.
            kwargs["sasl_plain_username"] = self.sasl_username
            kwargs["sasl_plain_password"] = self.sasl_password.get_secret_value() if self.sasl_password else None
        if self.security_protocol in ("SSL", "SASL_SSL"):
            kwargs.update(
                {
                    k: v
                    for k, v in (
                        ("ssl_cafile", self.ssl_cafile),
                        ("ssl_certfile", self.ssl_certfile),
                        ("ssl_keyfile", self.ssl_keyfile),
                    )
                    if v
                }
            )
        return kwargs

    def producer_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for kafka.KafkaProducer: durable (acks=all, idempotent) and bounded."""
        return {
            **self._common_kwargs(),
            "acks": "all",
            # Idempotence keeps broker-side retries from writing a record twice; the consumer
            # tolerates duplicates anyway, this just avoids the wasted work.
            "enable_idempotence": True,
            "max_request_size": self.max_message_bytes + _REQUEST_OVERHEAD_BYTES,
            # send() blocks at most this long for topic metadata when the cluster is unreachable.
            "max_block_ms": self.bootstrap_timeout_ms,
            "linger_ms": 5,
        }

    def consumer_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for kafka.KafkaConsumer: group member, manual commits, from earliest."""
        return {
            **self._common_kwargs(),
            "group_id": self.group_id,
            # Offsets are committed only after a record was stored or dead-lettered (at-least-once).
            "enable_auto_commit": False,
            # A new group starts at the oldest record so pages published before the first ingester
            # started are still ingested.
            "auto_offset_reset": "earliest",
            "session_timeout_ms": self.session_timeout_ms,
            "heartbeat_interval_ms": self.heartbeat_interval_ms,
            "max_poll_records": self.max_poll_records,
            "max_poll_interval_ms": self.max_poll_interval_ms,
            # Large enough that a record just over the limit is still fetched and can be dead-lettered.
            "max_partition_fetch_bytes": max(1024 * 1024, self.max_message_bytes + _REQUEST_OVERHEAD_BYTES),
        }
