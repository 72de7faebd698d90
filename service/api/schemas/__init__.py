"""Marshmallow schemas for every request and response of API v1, one module per blueprint
(``common`` holds what they share). The OpenAPI document is generated from them, so they are
the contract. Money is always integer minor units."""
