"""The OpenAPI document: the committed openapi.yaml is the one the app serves, the browsable
docs need no CDN, and every operation documents the problems every caller can meet."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from flask import Flask

from tests.api.client import Http

COMMITTED = Path(__file__).resolve().parents[2] / "openapi.yaml"
REGENERATE = ".venv/bin/flask --app service openapi write -f yaml openapi.yaml"
METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


def differences(committed: Any, served: Any, where: str = "") -> Iterator[str]:
    """JSON pointers (with what differs) at which two documents disagree."""
    if isinstance(committed, dict) and isinstance(served, dict):
        for key in sorted(committed.keys() | served.keys(), key=str):
            here = f"{where}/{str(key).replace('~', '~0').replace('/', '~1')}"
            if key not in served:
                yield f"{here}: only in openapi.yaml"
            elif key not in committed:
                yield f"{here}: only in the served document"
            else:
                yield from differences(committed[key], served[key], here)
    elif isinstance(committed, list) and isinstance(served, list) and len(committed) == len(served):
        for index, (old, new) in enumerate(zip(committed, served, strict=True)):
            yield from differences(old, new, f"{where}/{index}")
    elif committed != served:
        yield f"{where or '/'}: {committed!r} in openapi.yaml, {served!r} served"


def drift_report(committed: Any, served: Any) -> str | None:
    found = list(differences(committed, served))
    if not found:
        return None
    shown = "\n  ".join(found[:15]) + ("\n  ..." if len(found) > 15 else "")
    return (
        f"openapi.yaml does not match the document the app serves ({len(found)} differences):"
        f"\n  {shown}\nRegenerate it from the project root with:  {REGENERATE}"
    )


@pytest.fixture(scope="module")
def served(app: Flask) -> dict[str, Any]:
    response = app.test_client().get("/v1/openapi.json")
    assert response.status_code == 200
    assert response.mimetype == "application/json"
    document: dict[str, Any] = response.get_json()
    return document


def operations(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                yield f"{method.upper()} {path}", operation


def test_the_committed_openapi_yaml_is_the_served_document(served: dict[str, Any]) -> None:
    committed = yaml.safe_load(COMMITTED.read_text(encoding="utf-8"))
    report = drift_report(committed, served)
    assert report is None, report


def test_drift_is_reported_with_where_and_how_to_regenerate(served: dict[str, Any]) -> None:
    stale = yaml.safe_load(yaml.safe_dump(served))
    stale["info"]["title"] = "an old title"
    del stale["paths"]["/v1/quote"]
    stale["paths"]["/v1/gone"] = {}
    report = drift_report(stale, served)
    assert report is not None
    assert "3 differences" in report
    assert "/info/title: 'an old title' in openapi.yaml" in report
    assert "/paths/~1v1~1quote: only in the served document" in report
    assert "/paths/~1v1~1gone: only in openapi.yaml" in report
    assert REGENERATE in report


def test_the_docs_page_is_served_with_local_assets(http: Http) -> None:
    page = http.get("/v1/docs")
    assert page.status_code == 200
    assert page.mimetype == "text/html"
    html = page.get_data(as_text=True)
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert "/v1/docs/assets/swagger-ui-bundle.js" in assets
    assert "/v1/docs/assets/swagger-ui.css" in assets
    assert '"/v1/openapi.json"' in html
    assert "//" not in "".join(assets), "the docs page must not load anything from elsewhere"
    for asset in assets:
        loaded = http.get(asset)
        assert loaded.status_code == 200, asset
        assert loaded.content_length


def test_the_swagger_ui_bundle_is_served_as_javascript(http: Http) -> None:
    bundle = http.get("/v1/docs/assets/swagger-ui-bundle.js")
    assert bundle.status_code == 200
    assert bundle.mimetype in ("text/javascript", "application/javascript")
    assert b"SwaggerUIBundle" in bundle.get_data()
    assert http.get("/v1/docs/assets/no-such-file.js").status_code == 404


def test_every_operation_documents_503(served: dict[str, Any]) -> None:
    missing = [name for name, op in operations(served) if "503" not in op["responses"]]
    assert missing == []


def test_every_bearer_operation_documents_401(served: dict[str, Any]) -> None:
    secured = [
        (name, op)
        for name, op in operations(served)
        if {"bearer": []} in op.get("security", served.get("security", []))
    ]
    assert len(secured) > 10  # the players and games routes
    assert [name for name, op in secured if "401" not in op["responses"]] == []
    assert served["components"]["securitySchemes"]["bearer"] == {
        "type": "http",
        "scheme": "bearer",
    }


def test_every_documented_problem_is_problem_json(served: dict[str, Any]) -> None:
    shared = served["components"]["responses"]
    wrong = []
    for name, op in operations(served):
        for status, response in op["responses"].items():
            if status != "default" and int(status) < 400:
                continue
            if "$ref" in response:
                response = shared[response["$ref"].rsplit("/", 1)[-1]]
            if response.get("content") != {
                "application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}
            }:
                wrong.append(f"{name} {status}")
    assert wrong == []


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def test_every_reference_in_the_document_resolves(served: dict[str, Any]) -> None:
    """A client generator fails on a dangling $ref (the ETag header's was one)."""
    dangling = set()
    for ref in set(_refs(served)):
        node: Any = served
        for part in ref.removeprefix("#/").split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            dangling.add(ref)
    assert not dangling
    assert served["components"]["headers"]["ETAG"]["schema"] == {"type": "string"}


def test_every_operation_is_named_once_and_tagged() -> None:
    """Generated clients name their methods by operationId: each operation has one, no two the
    same, and a tag (its blueprint) to group it by."""
    document = yaml.safe_load(COMMITTED.read_text())
    named = [
        (operation.get("operationId"), operation.get("tags"))
        for path in document["paths"].values()
        for method, operation in path.items()
        if method in ("get", "put", "post", "delete", "patch")
    ]
    ids = [name for name, _ in named]
    assert None not in ids
    assert len(ids) == len(set(ids))
    assert all(tags for _, tags in named)
