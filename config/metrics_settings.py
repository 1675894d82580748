"""`[metrics]`: where `/metrics` is served for Prometheus, and who may read it."""

from __future__ import annotations

import ipaddress

from pydantic import Field, SecretStr, model_validator

from config.section import Section


class MetricsSettings(Section):
    """`/metrics` for Prometheus: off unless `listen` is set; off this machine only with a token."""

    listen: str | None = Field(
        None, description="host:port of /metrics; unset: off; not loopback: needs metrics.token"
    )
    token: SecretStr | None = Field(None, description="bearer token a scraper must send")

    @model_validator(mode="after")
    def _loopback_or_token(self) -> MetricsSettings:
        if self.listen is not None:
            check_metrics_listen(self.listen, has_token=self.token is not None)
        return self


def check_metrics_listen(listen: str, *, has_token: bool) -> None:
    """`ValueError` saying what to do unless `listen` is host:port, and loopback or guarded
    by a token: /metrics shows how busy the home server is to whoever reaches it."""
    host, sep, port = listen.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"must be host:port, e.g. 127.0.0.1:9464 (got {listen!r})")
    if has_token or host == "localhost":
        return
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ValueError(
            f"{host} is reachable from other machines: set metrics.token (a bearer token "
            "Prometheus sends) to serve /metrics there, or listen on 127.0.0.1"
        )
