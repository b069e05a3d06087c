from django.contrib import admin
from django.urls import reverse

from config.roles import primary_role, user_roles
from frontend.navigation import entries_for


def navigation(request):
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"nav_entries": [], "user_roles": []}
    entries = []
    for entry in entries_for(user):
        url = reverse(entry.url_name)
        entries.append({"label": entry.label, "url": url, "section": entry.section,
                        "active": request.path == url or (url != "/" and request.path.startswith(url))})
    roles = user_roles(user)
    return {"nav_entries": entries, "user_roles": sorted(roles), "primary_role": primary_role(user),
            "can_use_admin": admin.site.has_permission(request)}
