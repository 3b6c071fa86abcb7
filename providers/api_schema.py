"""The OpenAPI schema of the REST API as strict tools read it (drf-spectacular, OpenAPI 3.1): what every answer
always carries is `required`, nothing anonymous asks for a security requirement, every answer the server can give
is documented with its body (304, 400, 404, 405, 406, 415, 429 with Retry-After) and headers (ETag, Last-Modified,
Cache-Control, RateLimit), and catalog values (GPU and provider slugs) are strings looked up at /api/v1/gpus/ and
/api/v1/providers/, never enums frozen into a schema a client was generated from last month.

tests/api/test_schema_contract.py validates every operation's real answers against the served schema with
openapi-core and drives a client generated from it by openapi-python-client.
"""

from __future__ import annotations

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import force_instance

DETAIL_ERROR = {"type": "object", "properties": {"detail": {"type": "string"}}, "required": ["detail"]}


def sometimes_absent(field):
    """Mark an output field that some answers leave out (the schema then does not list it as required)."""
    field.sometimes_absent = True
    return field


class ApiAutoSchema(AutoSchema):
    """drf-spectacular's AutoSchema with every output field `required` (DRF writes every field of an output
    serializer, null when empty), except those marked with `sometimes_absent`."""

    def _map_basic_serializer(self, serializer, direction):
        schema = super()._map_basic_serializer(serializer, direction)
        if direction == "response":
            fields = force_instance(serializer).fields
            schema["required"] = [name for name in schema.get("properties", {})
                                  if not getattr(fields.get(name), "sometimes_absent", False)]
            if not schema["required"]:
                del schema["required"]
        return schema


class CsvAutoSchema(ApiAutoSchema):
    """A CSV operation's schema: its 200 is one text/csv body, not a page of objects."""

    def _is_list_view(self, serializer=None) -> bool:
        return False


def _header(description: str, schema: dict | None = None) -> dict:
    return {"description": description, "schema": schema or {"type": "string"}}


RETRY_AFTER = _header("Seconds to wait before asking again", {"type": "integer", "minimum": 0})
RATE_LIMIT_HEADERS = {
    "RateLimit-Policy": _header('The limit of this operation per client IP, as the IETF draft writes it: '
                                '`"api";q=120;w=60` is 120 requests per 60-second window '
                                "(draft-ietf-httpapi-ratelimit-headers)"),
    "RateLimit": _header('What is left of it: `"api";r=37;t=21` is 37 more requests in the 21 seconds before the '
                         "window ends"),
}
CACHE_HEADERS = {
    "ETag": _header("The data version and a digest of this answer: send it back as If-None-Match to get a 304 "
                    "while nothing changed"),
    "Last-Modified": _header("When a source last refreshed the data"),
    "Cache-Control": _header("public, max-age=300: reuse the answer for five minutes, then ask again with "
                             "If-None-Match"),
}
# providers.api.left_out_headers: the offers list's left_out_for_unknown, which a CSV has no other place for.
LEFT_OUT_HEADERS = {
    "Left-Out-For-Unknown": _header("How many offers the filters left out because an answer they ask about is "
                                    "unknown (as left_out_for_unknown.total; `10000+` past the exact count)"),
    "Left-Out-Questions": _header("The filters that left them out, comma-separated (as left_out_for_unknown."
                                  "questions); absent when none"),
}
LEFT_OUT_PATHS = ("/api/v1/offers/", "/api/v1/offers.csv")
GENERIC_ERRORS = {
    "405": "Method not allowed: the API is read-only but for POST /api/v1/advise/ (the Allow header lists the "
           "methods)",
    "406": "Not acceptable: the Accept header asks for a media type this operation does not give",
}
CATALOG_PARAMETERS = {
    "gpu": "GPU model slugs, as /api/v1/gpus/ lists them (`slug`)",
    "gpu_family": "GPU families, as /api/v1/gpus/ lists them (`family`)",
    "provider": "Provider slugs, as /api/v1/providers/ lists them (`slug`)",
    "providers": "Provider slugs, as /api/v1/providers/ lists them (`slug`)",
}


def schema_contract(result, generator, request, public):
    """drf-spectacular postprocessing hook: the rules of the module docstring applied to every operation."""
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            operation.pop("security", None)  # anonymous: nothing to authenticate with
            _responses_contract(method, operation.setdefault("responses", {}))
            _parameters_contract(operation)
            if path in LEFT_OUT_PATHS and method == "get":
                operation["responses"]["200"]["headers"].update(LEFT_OUT_HEADERS)
    _schemas_contract(result)
    return result


def _responses_contract(method: str, responses: dict) -> None:
    """The error answers every operation can give, the rate-limit and cache headers, the one Error schema."""
    for code, description in GENERIC_ERRORS.items():
        responses.setdefault(code, _json_response(description))
    if method == "post":
        responses.setdefault("415", _json_response("Unsupported media type: send the body as application/json"))
    if "429" in responses:
        for code, answer in responses.items():
            headers = answer.setdefault("headers", {})
            if code == "429":
                headers["Retry-After"] = RETRY_AFTER
            else:
                headers.pop("Retry-After", None)
            headers.update(RATE_LIMIT_HEADERS)
    if method == "get":
        responses.get("200", {}).setdefault("headers", {}).update(CACHE_HEADERS)
        responses["304"] = {"description": "Not modified: the answer named by If-None-Match is still current",
                            "headers": {"ETag": CACHE_HEADERS["ETag"]}}
    for answer in responses.values():
        for media in answer.get("content", {}).values():
            if media.get("schema") == DETAIL_ERROR:
                media["schema"] = {"$ref": "#/components/schemas/Error"}


def _parameters_contract(operation: dict) -> None:
    """No `format` parameter (the CSV operations have paths of their own); catalog parameters as plain strings."""
    operation["parameters"] = [parameter for parameter in operation.get("parameters", [])
                               if not (parameter.get("in") == "query" and parameter.get("name") == "format")]
    if not operation["parameters"]:
        del operation["parameters"]
    for parameter in operation.get("parameters", []):
        if parameter.get("in") == "query" and parameter.get("name") in CATALOG_PARAMETERS:
            _unfreeze(parameter["schema"])
            parameter["description"] = (f"{parameter.get('description', '').rstrip('.')}. "
                                        f"{CATALOG_PARAMETERS[parameter['name']]}.").lstrip(". ")


def _schemas_contract(result: dict) -> None:
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas["Error"] = {**DETAIL_ERROR, "description": "What went wrong, in words"}
    for name in ("KubernetesState", "KubernetesRdmaState"):
        if name in schemas:
            # Nothing more: so an answer with its reasons (KubernetesAnswer) is never read as one without.
            schemas[name]["additionalProperties"] = False
    advise = schemas.get("AdviseInput", {}).get("properties", {})
    for field in ("gpu", "gpu_family"):
        if field in advise:
            advise[field] = {"type": ["string", "null"],
                             "description": f"{CATALOG_PARAMETERS[field]}; empty or null for any"}
    text = str(result.get("paths")) + str(schemas)
    for name in [name for name in schemas if name.endswith("Enum")]:
        if f"#/components/schemas/{name}'" not in text:
            del schemas[name]  # an enum of catalog values no longer used anywhere


def _json_response(description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": dict(DETAIL_ERROR)}}}


def _unfreeze(schema: dict) -> None:
    """A catalog parameter's schema as a string (or an array of strings): the values live in the lookup endpoints."""
    target = schema["items"] if schema.get("type") == "array" else schema
    target.pop("enum", None)
    target["type"] = "string"
