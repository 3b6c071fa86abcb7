"""POST /api/v1/advise/: the workload advisor over JSON. Parses the input, asks the one selector, renders.

POST rather than GET because the input is a nested document (models to pack, must-haves); nothing is written.
No authentication: the endpoint reads public data, and skipping session authentication spares API clients the
CSRF token a session-authenticated POST would need.
"""

from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework.exceptions import APIException, ParseError, ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from providers.api import ERROR_429, AdviseRateThrottle, rate_limit_headers
from providers.api_schema import DETAIL_ERROR
from providers.filters import unknown_parameters

from .engine import AdviceRefused
from .selectors import advice_get
from .serializers import AdviceOutputSerializer, AdviseInputSerializer

MESSAGES = {"type": "array", "items": {"type": "string"}}
INVALID_INPUT = OpenApiResponse(
    response={"type": "object", "additionalProperties": {"anyOf": [
        # the field's messages, or (models) per item: an object of messages by field, or the item's own messages
        {"type": "array", "items": {"anyOf": [{"type": "string"}, MESSAGES,
                                              {"type": "object", "additionalProperties": MESSAGES}]}},
        {"type": "object", "additionalProperties": MESSAGES},  # a list's items by index: {"0": ["not a choice"]}
    ]}},
    description="Input the advisor cannot use: each offending field with what is wrong with it (per item for "
                "`models`); a body that is not a JSON object, or not JSON at all, under `non_field_errors`; a "
                "query parameter (the input is the body) under its name.",
    examples=[OpenApiExample("missing kind", value={"kind": ["This field is required."]}),
              OpenApiExample("malformed JSON", value={"non_field_errors": [
                  "JSON parse error - Expecting value: line 1 column 1 (char 0)"]})],
)


class AdviceNotNow(APIException):
    """engine.AdviceRefused on the API: 503 with the refusal's words and Retry-After."""

    status_code = 503
    default_code = "advice_not_now"

    def __init__(self, refused: AdviceRefused):
        super().__init__(detail=str(refused.message))
        self.wait = refused.retry_after


class AdviseApi(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes = [AdviseRateThrottle]  # settings.API_ADVISE_RATE per client IP: each request ranks every offer

    @extend_schema(
        request=AdviseInputSerializer,
        responses={200: AdviceOutputSerializer, 400: INVALID_INPUT, 429: ERROR_429,
                   503: OpenApiResponse(response=DETAIL_ERROR,
                                        description="The advice went past the advisor's time budget, or every "
                                                    "advice slot of the server is computing; Retry-After says "
                                                    "when to ask again.")},
        summary="Advise where to run a GPU workload on Kubernetes and what it costs per month",
    )
    def post(self, request):
        serializer = AdviseInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            advice = advice_get(spec=serializer.spec)
        except AdviceRefused as refused:
            raise AdviceNotNow(refused) from None
        return Response(AdviceOutputSerializer(advice).data)

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        unknown = unknown_parameters(request.query_params, reads=())
        if unknown:
            raise ValidationError({name: ["Unknown query parameter: the advisor reads its input from the JSON body."]
                                   for name in unknown})

    def handle_exception(self, exc):
        # A body that is not JSON answers in the shape of any other bad input (the schema's one 400), not {"detail"}.
        if isinstance(exc, ParseError):
            exc = ValidationError({api_settings.NON_FIELD_ERRORS_KEY: [str(exc.detail)]})
        return super().handle_exception(exc)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        rate_limit_headers(request, response)
        return response
