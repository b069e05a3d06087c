class CrowdError(Exception):
    """A request the crowd engine refuses; `status` is the HTTP status that describes it."""

    status = 400

    def __init__(self, message: str, *, status: int | None = None, details=None):
        super().__init__(message)
        self.message = message
        self.details = details
        if status is not None:
            self.status = status


class NotEligible(CrowdError):
    status = 403


class StudyNotOpen(CrowdError):
    status = 409


class NotYourClaim(CrowdError):
    status = 403


class ClaimNotActive(CrowdError):
    status = 409


class InvalidSubmission(CrowdError):
    status = 400


class ItemWithheld(CrowdError):
    """The only items left are ones this worker may not have now (`annotation.crowd.claim_checks`)."""

    status = 409
