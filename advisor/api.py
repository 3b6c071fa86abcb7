"""POST /api/v1/advise/: the workload advisor over JSON. Parses the input, asks the one selector, renders.

POST rather than GET because the input is a nested document (models to pack, must-haves); nothing is written.
No authentication: the endpoint reads public data, and skipping session authentication spares API clients the
CSRF token a session-authenticated POST would need.
"""

from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from providers.api import AdviseRateThrottle, rate_limit_headers

from .selectors import advice_get
from .serializers import AdviceOutputSerializer, AdviseInputSerializer

INVALID_INPUT = OpenApiResponse(
    response={"type": "object", "additionalProperties": {}},
    description="Input the advisor cannot use: each offending field with what is wrong with it (per item for "
                "`models`).",
    examples=[OpenApiExample("missing kind", value={"kind": ["This field is required."]})],
)


class AdviseApi(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes = [AdviseRateThrottle]  # settings.API_ADVISE_RATE per client IP: each request ranks every offer

    @extend_schema(
        request=AdviseInputSerializer,
        responses={200: AdviceOutputSerializer, 400: INVALID_INPUT},
        summary="Advise where to run a GPU workload on Kubernetes and what it costs per month",
    )
    def post(self, request):
        serializer = AdviseInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        advice = advice_get(spec=serializer.spec)
        return Response(AdviceOutputSerializer(advice).data)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        rate_limit_headers(request, response)
        return response
