"""The bodies of the write-back endpoints (`evaluation.analysis_api`): judge references of a frozen
version's items and the failure factors tagged on a run's wrong predictions."""

from rest_framework import serializers

from config.api_fields import JSONObjectField


class JudgeReferenceSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    item = serializers.CharField(help_text="the item's external id")
    text = serializers.CharField()
    source = serializers.CharField(help_text="where the text came from (a study, a baseline, …)")
    study = serializers.CharField(allow_null=True)
    submission = serializers.IntegerField(allow_null=True)
    vote_study = serializers.CharField(allow_null=True)
    votes = serializers.IntegerField(allow_null=True, help_text="voters who selected it")
    voters = serializers.IntegerField(allow_null=True, help_text="voters who saw it")
    approved_by = serializers.CharField()
    approved_at = serializers.DateTimeField()
    revoked_at = serializers.DateTimeField(allow_null=True)


class CandidateSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="how to approve it: <item id>:<text key>")
    item = serializers.CharField()
    text = serializers.CharField()
    status = serializers.CharField(help_text="valid, invalid or not voted")
    votes = serializers.IntegerField(allow_null=True)
    voters = serializers.IntegerField(allow_null=True)
    vote_study = serializers.CharField(allow_null=True)
    sources = serializers.ListField(child=JSONObjectField(help_text="{study, submission, worker, request_id}"))
    approved = serializers.IntegerField(allow_null=True, help_text="the reference it became, once approved")
    approvable = serializers.BooleanField()


class ItemReferencesSerializer(serializers.Serializer):
    item = serializers.CharField()
    explanation = serializers.CharField()
    human_explanations = serializers.ListField(child=serializers.CharField())
    references = JudgeReferenceSerializer(many=True)
    candidates = CandidateSerializer(many=True)


class VersionReferencesSerializer(serializers.Serializer):
    version = serializers.IntegerField()
    frozen = serializers.BooleanField()
    items = ItemReferencesSerializer(many=True, help_text="empty until the version is frozen")


class ApproveReferencesSerializer(serializers.Serializer):
    candidates = serializers.ListField(child=serializers.CharField(), required=False,
                                       help_text="the candidate tokens to approve")
    approve_voted = serializers.BooleanField(required=False, help_text="true: approve every candidate voted valid")


class ApprovedReferencesSerializer(serializers.Serializer):
    approved = JudgeReferenceSerializer(many=True)


class RevokeReferenceSerializer(serializers.Serializer):
    reason = serializers.CharField(help_text="why the reference is revoked")


class FactorShareSerializer(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField()
    count = serializers.IntegerField()
    share = serializers.FloatField(allow_null=True, help_text="of the tagged predictions; null while none is tagged")


class TagSerializer(serializers.Serializer):
    prediction = serializers.IntegerField()
    factor = serializers.CharField(allow_null=True)
    note = serializers.CharField()
    tagged_by = serializers.CharField(allow_null=True)
    tagged_at = serializers.DateTimeField(allow_null=True)


class WrongPredictionSerializer(TagSerializer):
    request_id = serializers.CharField()


class FailureTagsSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    model = serializers.CharField()
    wrong = serializers.IntegerField(help_text="wrong predictions")
    tagged = serializers.IntegerField()
    factors = FactorShareSerializer(many=True)
    predictions = WrongPredictionSerializer(many=True)


class TagRequestSerializer(serializers.Serializer):
    prediction = serializers.IntegerField(help_text="a prediction id of this run")
    factor = serializers.CharField(help_text="a failure factor of the run's benchmark; empty: untag")
    note = serializers.CharField(required=False, allow_blank=True)
