"""POST /api/v1/advise/: the workload advisor over JSON. Parses the input, asks the one selector, renders.

POST rather than GET because the input is a nested document (models to pack, must-haves); nothing is written.
No authentication: the endpoint reads public data, and skipping session authentication spares API clients the
CSRF token a session-authenticated POST would need.
"""

from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from .selectors import advice_get
from .serializers import AdviceOutputSerializer, AdviseInputSerializer


class AdviseApi(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]

    @extend_schema(
        request=AdviseInputSerializer,
        responses={200: AdviceOutputSerializer},
        summary="Advise where to run a GPU workload on Kubernetes and what it costs per month",
    )
    def post(self, request):
        serializer = AdviseInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        advice = advice_get(spec=serializer.spec)
        return Response(AdviceOutputSerializer(advice).data)
