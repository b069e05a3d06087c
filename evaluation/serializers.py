"""Evaluation runs over the API: what a run shows, its progress, its predictions, the options that start
one (the same as `manage.py evaluate` and the runs page) and what imports one from a predictions file (the
same as `manage.py import_run` and the version's results page)."""

from rest_framework import serializers

from annotation.models import BenchmarkVersion
from config.api_fields import JSONListField, JSONObjectField, JSONValueField
from evaluation import imported_runs, request_exports, request_options, runs
from evaluation.models import EvaluationRun, Prediction
from generation.frames import FramePolicy


def frame_spec(run: EvaluationRun) -> str:
    """The run's frame policy written as on the command line (`uniform:8@448`)."""
    if not run.frame_policy:
        return ""
    try:
        return FramePolicy.from_dict(run.frame_policy).spec()
    except (KeyError, ValueError):
        return str(run.frame_policy)


def percent(run: EvaluationRun) -> float:
    return round(100.0 * run.completed_predictions / run.total_predictions, 1) if run.total_predictions else 0.0


def eta_text(run: EvaluationRun) -> str | None:
    return runs.format_seconds(run.eta_seconds) if run.eta_seconds is not None and not run.is_finished else None


class RunProgressSerializer(serializers.ModelSerializer):
    """Progress as the run last stored it (chunks update it after every batch)."""

    # a plain string here, so that the schema names the status enum once (RunStatusEnum, in Run)
    status = serializers.CharField(read_only=True, help_text="pending, running, succeeded, failed or cancelled")
    percent = serializers.SerializerMethodField()
    eta = serializers.SerializerMethodField()
    is_finished = serializers.BooleanField(read_only=True)

    class Meta:
        model = EvaluationRun
        fields = ["id", "status", "message", "total_predictions", "completed_predictions", "cached_predictions",
                  "failed_predictions", "percent", "throughput", "eta_seconds", "eta", "is_finished", "started_at",
                  "finished_at"]
        read_only_fields = fields

    def get_percent(self, run) -> float:
        return percent(run)

    def get_eta(self, run) -> str | None:
        """ETA as h:mm:ss (or m:ss); null when unknown."""
        return eta_text(run)


class RunTransitionSerializer(serializers.Serializer):
    """One status change of a run, from the state history."""

    from_status = serializers.CharField(source="from_state", read_only=True)
    to_status = serializers.CharField(source="to_state", read_only=True)
    reason = serializers.CharField(read_only=True)
    by = serializers.CharField(source="actor.username", read_only=True, allow_null=True, default=None)
    at = serializers.DateTimeField(source="created_at", read_only=True)


class RunSerializer(RunProgressSerializer):
    status = serializers.ChoiceField(choices=EvaluationRun.Status.choices, read_only=True)
    benchmark = serializers.CharField(source="version.benchmark.slug", read_only=True)
    version_label = serializers.CharField(source="version.label", read_only=True)
    frames = serializers.SerializerMethodField()
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    transitions = RunTransitionSerializer(many=True, read_only=True)
    subset = serializers.SlugRelatedField(slug_field="name", read_only=True, allow_null=True)
    backend_options = JSONObjectField(read_only=True, help_text="the backend's options: dtype, device map, base URL, …")
    frame_policy = JSONObjectField(read_only=True, help_text="how frames are sampled (see `frames` for its spec)")
    generation_params = JSONObjectField(read_only=True, help_text="temperature, top_p, max_new_tokens, …")
    variants = JSONListField(read_only=True, help_text="the task variants run; empty: every variant of the benchmark")
    describer = JSONObjectField(read_only=True, help_text="image-to-text: {backend, model_id, revision, "
                                                          "resolved_revision, options}")
    nul_removed = serializers.SerializerMethodField()

    class Meta(RunProgressSerializer.Meta):
        fields = ["id", "benchmark", "version", "version_label", "model_id", "model_revision", "resolved_revision",
                  "backend", "backend_options", "input_strategy", "prompting", "option_order", "frames", "frame_policy",
                  "generation_params", "seed", "variants", "limit", "subset", "n_samples", "describer", "batch_size",
                  "chunk_size", "workers", "total_requests", *RunProgressSerializer.Meta.fields[1:], "job",
                  "created_by", "created_at", "transitions", "nul_removed"]
        read_only_fields = fields

    def get_frames(self, run) -> str:
        """The frame policy as a spec (`uniform:8@448`)."""
        return frame_spec(run)

    def get_nul_removed(self, run) -> int:
        """NUL characters removed from the model's replies before they were stored (the database keeps none);
        each prediction counts its own in `params.nul_removed`."""
        return runs.nul_removed(run)


class PredictionSerializer(serializers.ModelSerializer):
    item = serializers.CharField(source="item.external_id", read_only=True)
    parsed_answer = JSONValueField(read_only=True, allow_null=True,
                                   help_text="the default parser's reading of the answer; its form depends on the task")
    parses = JSONObjectField(read_only=True, help_text="every reading so far, by parser name: {name: {value, status}}")
    prompt = JSONListField(read_only=True, help_text="the exact messages sent ({role, content}), media as fingerprints")
    inputs = JSONObjectField(read_only=True, help_text="frame indices, image order, policy")
    params = JSONObjectField(read_only=True, help_text="the generation parameters of this request")

    class Meta:
        model = Prediction
        fields = ["id", "request_id", "sample_index", "item", "variant", "raw_output", "parsed_answer",
                  "parse_status", "parses", "error", "from_cache", "latency_s", "prompt_tokens", "completion_tokens",
                  "prompt", "inputs", "params", "created_at"]
        read_only_fields = fields


class VersionChoiceSerializer(serializers.Serializer):
    """A benchmark version named by `version` (id) or by `benchmark` + `version_label` (a frozen one)."""

    version = serializers.PrimaryKeyRelatedField(queryset=BenchmarkVersion.objects.select_related("benchmark"),
                                                 required=False)
    benchmark = serializers.CharField(required=False)
    version_label = serializers.CharField(required=False)

    def validate(self, data):
        if data.get("version") is None:
            if not data.get("benchmark") or not data.get("version_label"):
                raise serializers.ValidationError("Give `version` (an id) or `benchmark` and `version_label`.")
            try:
                data["version"] = request_options.find_version(data["benchmark"], data["version_label"])
            except runs.RunConfigError as exc:
                raise serializers.ValidationError(str(exc)) from None
        return data


class RunCreateSerializer(VersionChoiceSerializer):
    """The options of a new run: name the version by `version` (id) or by `benchmark` + `version_label`.
    Whether they fit the benchmark and the backend is checked by `evaluation.runs.create_run`."""

    model_id = serializers.CharField(max_length=255, help_text="a registered model (GET /api/models/): its name, "
                                                               "its id, or the model id or folder it holds")
    backend = serializers.CharField(default="", allow_blank=True,
                                    help_text="empty: the registered model's; else it must be that one")
    revision = serializers.CharField(default="", allow_blank=True,
                                     help_text="empty: the registered model's pinned revision; else it must be "
                                               "that one")
    backend_options = serializers.DictField(default=dict, help_text="options the backend lets people pass (device, "
                                                                    "dtype, native_video, …); endpoint, key and "
                                                                    "trust_remote_code options are an admin's")
    input_strategy = serializers.CharField(default="", allow_blank=True, help_text="empty: the benchmark's default")
    prompting = serializers.CharField(default="standard")
    option_order = serializers.CharField(default="release", help_text="release, or shuffled:<seed>")
    frames = serializers.CharField(default="", allow_blank=True, help_text="uniform:8@448, first, black:8, …")
    batch_size = serializers.IntegerField(default=8)
    chunk_size = serializers.IntegerField(default=64)
    limit = serializers.IntegerField(required=False, allow_null=True)
    n_samples = serializers.IntegerField(required=False, allow_null=True)
    temperature = serializers.FloatField(required=False, allow_null=True)
    top_p = serializers.FloatField(required=False, allow_null=True)
    max_new_tokens = serializers.IntegerField(required=False, allow_null=True)
    seed = serializers.IntegerField(default=0)
    variants = serializers.ListField(child=serializers.CharField(), default=list, help_text="empty: every variant")
    describer_model = serializers.CharField(default="", allow_blank=True,
                                            help_text="image-to-text: the registered model that captions the media")
    describer_backend = serializers.CharField(default="", allow_blank=True,
                                              help_text="empty: the registered describer's")
    subset = serializers.CharField(default="", allow_blank=True, max_length=100,
                                   help_text="the name of a subset of the version: only its requests (empty: all)")

    def create_options(self) -> dict:
        """Keyword arguments for `runs.create_run` (besides the version, workers and user)."""
        data = self.validated_data
        describer = None
        if data["describer_model"]:
            describer = {"model_id": data["describer_model"], "backend": data["describer_backend"]}
        return {
            "model_id": data["model_id"], "backend": data["backend"], "revision": data["revision"],
            "backend_options": data["backend_options"], "input_strategy": data["input_strategy"],
            "prompting": data["prompting"], "option_order": data["option_order"], "frame_policy": data["frames"],
            "generation_params": {key: data.get(key) for key in runs.GENERATION_KEYS},
            "seed": data["seed"], "variants": data["variants"], "limit": data.get("limit"),
            "n_samples": data.get("n_samples"), "batch_size": data["batch_size"], "chunk_size": data["chunk_size"],
            "describer": describer, "subset": data["subset"].strip() or None,
        }


class RunImportSerializer(VersionChoiceSerializer):
    """Predictions made outside the platform, imported as a run (`evaluation.imported_runs`): the file, its
    format, the model's name, and the options the requests were exported with."""

    file = serializers.FileField(help_text="the platform's JSON lines, lmms-eval samples or a VLMEvalKit table "
                                           "(.tsv, .csv, .xlsx)")
    predictions_format = serializers.ChoiceField(choices=request_exports.FORMATS, required=False, allow_blank=True,
                                                 help_text="jsonl, lmms-eval or vlmevalkit; empty: told from the file")
    model_id = serializers.CharField(max_length=255, help_text="the model's name: the run is listed under it")
    input_strategy = serializers.CharField(default="default", help_text="default: the benchmark's main one")
    prompting = serializers.CharField(default="standard")
    seed = serializers.IntegerField(default=0)
    variants = serializers.ListField(child=serializers.CharField(), default=list, help_text="empty: every variant")
    option_order = serializers.CharField(default="release", help_text="release, or shuffled:<seed>")

    def import_options(self) -> imported_runs.ImportOptions:
        data = self.validated_data
        return imported_runs.ImportOptions(input_strategy=data["input_strategy"], prompting=data["prompting"],
                                           seed=data["seed"], variants=tuple(data["variants"]),
                                           option_order=data["option_order"])
