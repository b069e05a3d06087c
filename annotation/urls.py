from django.urls import path

from annotation import media_views

urlpatterns = [
    path("files/videos/<id:pk>/", media_views.video_file, name="media-video-file"),
    path("files/videos/<id:pk>/poster/", media_views.video_poster, name="media-video-poster"),
    path("files/images/<id:pk>/", media_views.image_file, name="media-image-file"),
    path("files/images/<id:pk>/thumbnail/", media_views.image_thumbnail, name="media-image-thumbnail"),
]
