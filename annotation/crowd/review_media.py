"""The media a reviewer sees beside a submission: players and pictures whose addresses are the
permission-checked file URLs of `annotation.urls` (reviewers and researchers may see the library;
anyone else is refused there, whatever the page shows)."""

from django.urls import reverse


def video_entry(video, label: str) -> dict:
    """A player of `video` with its poster, when it has one."""
    return {"kind": "video", "label": label, "url": reverse("media-video-file", kwargs={"pk": video.pk}),
            "poster_url": reverse("media-video-poster", kwargs={"pk": video.pk}) if video.poster else ""}


def image_entry(image, label: str) -> dict:
    return {"kind": "image", "label": label, "url": reverse("media-image-file", kwargs={"pk": image.pk}),
            "poster_url": ""}


def item_media(item) -> list[dict]:
    """A study item's own image and video, as its workers saw them on the task page."""
    media = []
    if item.image_id:
        media.append(image_entry(item.image, "Image"))
    if item.video_id:
        media.append(video_entry(item.video, "Video"))
    return media
