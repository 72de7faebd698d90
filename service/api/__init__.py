"""The HTTP shell: the Flask app's blueprints, request and response schemas, problem documents
and access rules. A handler parses, calls a service and renders; it imports services and
schemas, never storage, the event store or the SQL driver (pyproject.toml: the import
contracts `make lint` checks)."""
