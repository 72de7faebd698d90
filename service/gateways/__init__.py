"""Gateways: the shell's adapters to systems outside the service's own database (the operator's
wallet over HTTP). Like storage, they sit under the services and know nothing of the web, the
broker or the composition root."""
