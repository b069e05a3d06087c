from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from annotation.crowd import quality
from annotation.crowd.models import QualificationTest
from config.api_fields import JSONObjectField
from config.roles import ADMIN, ANNOTATOR, CURATOR


class QualificationTestSerializer(serializers.ModelSerializer):
    qualification = serializers.SlugRelatedField(slug_field="name", read_only=True)
    questions = serializers.SerializerMethodField()

    class Meta:
        model = QualificationTest
        fields = ["id", "name", "qualification", "questions", "pass_threshold", "retry_delay_seconds"]

    @extend_schema_field(serializers.ListField(child=JSONObjectField(
        help_text="a question: id, prompt, choices, … (never its answer)")))
    def get_questions(self, obj) -> list:
        return quality.public_questions(obj)


class AttemptSerializer(serializers.Serializer):
    answers = serializers.DictField(child=serializers.CharField(allow_blank=True))


class AttemptResultSerializer(serializers.Serializer):
    score = serializers.FloatField()
    passed = serializers.BooleanField()
    qualification = serializers.CharField(allow_null=True, help_text="the qualification earned; null unless passed")


class QualificationTestViewSet(viewsets.ReadOnlyModelViewSet):
    """Qualification tests: workers read the questions (never the answers) and submit an attempt."""

    allowed_roles = (ANNOTATOR, CURATOR, ADMIN)
    queryset = QualificationTest.objects.select_related("qualification").order_by("name", "pk")
    serializer_class = QualificationTestSerializer
    rate_limited = False  # only attempts are: a failed one waits for the test's retry delay (429)

    @extend_schema(request=AttemptSerializer, responses={201: AttemptResultSerializer})
    @action(detail=True, methods=["post"], rate_limited=True)
    def attempt(self, request, pk=None):
        body = AttemptSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        attempt = quality.take_qualification_test(self.get_object(), request.user, body.validated_data["answers"])
        return Response({"score": attempt.score, "passed": attempt.passed,
                         "qualification": attempt.test.qualification.name if attempt.passed else None}, status=201)
