from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotation.crowd import answer_keys, forms, studies, study_settings
from annotation.crowd.models import Claim, Qualification, Study, StudyItem, Submission
from config.api_fields import JSONObjectField
from config.ids import IdField


class StudySerializer(serializers.ModelSerializer):
    required_qualification = serializers.SlugRelatedField(
        slug_field="name", queryset=Qualification.objects.all(), required=False, allow_null=True)
    item_count = serializers.IntegerField(source="items.count", read_only=True)
    form_schema = JSONObjectField(required=False, help_text="the form: {fields: [...]} (see annotation.crowd.forms)")
    required_attributes = JSONObjectField(
        required=False, help_text='worker attributes that must match, e.g. {"native_language": "it"}')

    class Meta:
        model = Study
        fields = ["id", "name", "slug", "step_kind", "form_schema", "output_version", "state", "annotators_per_item",
                  "max_items_per_video", "count_accepted_only", "lease_seconds", "instructions", "language",
                  "estimated_minutes", "pay_per_item", "currency", "required_qualification", "required_attributes",
                  "gold_share", "expert_share", "expert_first", "min_accept_rate", "min_reviews_for_exclusion",
                  "attention_warn_after", "attention_block_after", "completion_code", "completion_url",
                  "required_submissions", "recruitment_platform", "platform_study_id", "item_count", "created_at"]
        read_only_fields = ["state", "created_at", "item_count"]

    def validate(self, attrs):
        """The study settings' rules (`study_settings`): out of range → 400 naming the field; a
        frozen setting changed after work started → 409 with the reason."""
        attrs = super().validate(attrs)
        try:
            study_settings.check(attrs, study=self.instance)
        except study_settings.SettingsError as exc:
            raise serializers.ValidationError(exc.details) from None
        return attrs

    def create(self, validated_data):
        """A new study is made by the one study-creation service (`annotation.crowd.studies`)."""
        return studies.create_study(**validated_data).study


class StudyItemInSerializer(serializers.Serializer):
    external_id = serializers.CharField(max_length=128)
    payload = JSONObjectField(help_text="what the item shows; its keys depend on the study's kind and form")
    role = serializers.ChoiceField(choices=StudyItem.Role.choices, default=StudyItem.Role.REGULAR)
    answer_key = JSONObjectField(required=False, default=dict, help_text=(
        "gold and attention items: {fields: {name: expected answer}}, or per field a rule {answer, rule, tolerance} "
        "(rule: exact, one_of, set_equal, within, contains, mapping); see annotation.crowd.answer_keys"))

    def validate(self, attrs):
        found = answer_keys.problems(attrs.get("answer_key", {}), role=attrs["role"], study=self.context.get("study"))
        if found:
            raise serializers.ValidationError(found)
        return attrs


class ClaimItemSerializer(serializers.Serializer):
    external_id = serializers.CharField()
    payload = JSONObjectField(help_text="what the item shows; its keys depend on the study's kind and form")


class DraftSerializer(serializers.Serializer):
    data = JSONObjectField(help_text="the answers saved so far, by form field")
    revision = serializers.IntegerField()
    updated_at = serializers.DateTimeField()


class WorkerClaimSerializer(serializers.ModelSerializer):
    """What a worker may see of their claim: never the answer key, never other workers' work."""

    study = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    item = serializers.SerializerMethodField()
    draft = serializers.SerializerMethodField()
    fields_ = serializers.SerializerMethodField(method_name="get_form_fields")

    class Meta:
        model = Claim
        fields = ["id", "study", "status", "item", "lease_expires_at", "claimed_at", "draft", "fields_"]

    def get_fields(self):
        found = super().get_fields()
        found["fields"] = found.pop("fields_")  # `fields` is taken by the serializer's own attribute
        return found

    @extend_schema_field(ClaimItemSerializer)
    def get_item(self, obj) -> dict:
        return {"external_id": obj.item.external_id, "payload": obj.item.payload}

    @extend_schema_field(DraftSerializer(allow_null=True))
    def get_draft(self, obj) -> dict | None:
        draft = getattr(obj, "draft", None)
        return {"data": draft.data, "revision": draft.revision, "updated_at": draft.updated_at} if draft else None

    @extend_schema_field(serializers.ListField(child=JSONObjectField(
        help_text="a form field as the page renders it: name, type, label, choices, …")))
    def get_form_fields(self, obj) -> list:
        return forms.render_fields(obj.study.form_schema, obj.item.payload, obj.presentation)

    def to_representation(self, instance):
        # by hand: every claim request renders one, and DRF's field machinery costs more than the rest
        return {"id": instance.pk, "study": instance.study.slug, "status": instance.status,
                "item": self.get_item(instance),
                "lease_expires_at": serializers.DateTimeField().to_representation(instance.lease_expires_at),
                "claimed_at": serializers.DateTimeField().to_representation(instance.claimed_at),
                "draft": self.get_draft(instance), "fields": self.get_form_fields(instance)}


class AnswerSerializer(serializers.Serializer):
    data = JSONObjectField(help_text="the answers, by form field (a staged step: by the step's fields)")
    active_seconds = serializers.FloatField(required=False, default=0, min_value=0)


class SubmissionSerializer(serializers.ModelSerializer):
    worker = serializers.CharField(source="claim.worker.username", read_only=True)
    item = serializers.CharField(source="claim.item.external_id", read_only=True)
    item_role = serializers.CharField(source="claim.item.role", read_only=True)
    claim_status = serializers.CharField(source="claim.status", read_only=True)
    reviewed_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    data = JSONObjectField(read_only=True, help_text="the worker's answers, by form field")
    reviewed_data = JSONObjectField(read_only=True, allow_null=True,
                                    help_text="a reviewer's corrected version of the answers; `data` is kept")

    class Meta:
        model = Submission
        fields = ["id", "claim", "worker", "item", "item_role", "claim_status", "data", "reviewed_data",
                  "active_seconds", "wall_seconds", "submitted_at", "review_state", "review_queue", "check_passed",
                  "reviewed_by", "reviewed_at", "review_reason", "review_criterion"]


class ReviewSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=["approve", "reject", "edit"])
    reason = serializers.CharField(required=False, allow_blank=True, default="")
    criterion = serializers.CharField(required=False, allow_blank=True, default="", max_length=32,
                                      help_text="the criterion a rejection fails, for kinds that name criteria")
    data = JSONObjectField(required=False, help_text="edit: the corrected answers, by form field")


class BulkReviewSerializer(serializers.Serializer):
    submission_ids = serializers.ListField(child=IdField(), allow_empty=False, max_length=1000)
    action = serializers.ChoiceField(choices=["approve", "reject"])
    reason = serializers.CharField(required=False, allow_blank=True, default="")
    criterion = serializers.CharField(required=False, allow_blank=True, default="", max_length=32)


# --- Response bodies the views build by hand ---------------------------------------------------

FEEDBACK_HELP = "what the worker is told about a failed gold or attention check ({message, …}); empty otherwise"


class NoItemLeftSerializer(serializers.Serializer):
    claim = serializers.IntegerField(allow_null=True, help_text="always null: no item is left for the caller")
    message = serializers.CharField()


class DraftSavedSerializer(serializers.Serializer):
    revision = serializers.IntegerField()
    updated_at = serializers.DateTimeField()


class SubmittedSerializer(serializers.Serializer):
    submission = serializers.IntegerField(help_text="the submission's id")
    created = serializers.BooleanField(help_text="false: the claim was submitted before; this is that submission")
    feedback = JSONObjectField(help_text=FEEDBACK_HELP)


class ReleasedClaimSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Claim.Status.choices)


class StudyItemsAddedSerializer(serializers.Serializer):
    created = serializers.IntegerField(help_text="how many items were added")


class BulkReviewResultSerializer(serializers.Serializer):
    done = serializers.ListField(child=serializers.IntegerField(), help_text="the submissions decided")
    failed = serializers.DictField(child=serializers.CharField(), help_text="submission id: why it was not decided")


class StudySummarySerializer(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    state = serializers.ChoiceField(choices=Study.State.choices)
    annotators_per_item = serializers.IntegerField()


class SubmissionCountsSerializer(serializers.Serializer):
    total = serializers.IntegerField()
    rejected = serializers.IntegerField()
    counted = serializers.IntegerField()


class ThroughputSerializer(serializers.Serializer):
    submissions = serializers.IntegerField()
    span_start = serializers.DateTimeField(allow_null=True)
    span_end = serializers.DateTimeField(allow_null=True)
    span_hours = serializers.FloatField(allow_null=True)
    submissions_per_hour = serializers.FloatField(allow_null=True)
    median_active_seconds = serializers.FloatField(allow_null=True)
    mean_active_seconds = serializers.FloatField(allow_null=True)
    median_wall_seconds = serializers.FloatField(allow_null=True)
    mean_wall_seconds = serializers.FloatField(allow_null=True)


class ItemProgressSerializer(serializers.Serializer):
    k = serializers.IntegerField(help_text="annotators per item")
    regular_items = serializers.IntegerField()
    complete = serializers.IntegerField()
    open = serializers.IntegerField()
    check_items = serializers.IntegerField(help_text="gold and attention items")


class StudyReportSerializer(serializers.Serializer):
    study = StudySummarySerializer()
    generated_at = serializers.DateTimeField()
    submissions = SubmissionCountsSerializer()
    agreement = serializers.ListField(child=JSONObjectField(), help_text=(
        "one row per categorical form field (and part): field, label, type, part and its agreement figures"))
    workers = serializers.ListField(child=JSONObjectField(), help_text=(
        "one row per worker: the columns of report.csv (worker, submissions, approved, gold_accuracy, …)"))
    throughput = ThroughputSerializer()
    items = ItemProgressSerializer()
