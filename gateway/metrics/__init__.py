"""`/metrics` for Prometheus: what kioku counts (`exported`), what it reads of itself at
each scrape (`state`), and the server on `metrics.listen` (`server`)."""
