"""The processes' runtime: configuration from the environment (``config``), where the database
comes from and its migrations (``database``), the embedded PostgreSQL's keeper, gunicorn's
settings and WSGI entry point, the supervisor `make run` starts, and key files. It knows no
rules or use cases: the composition root (``service.bootstrap``) puts them together.
"""
