from django.contrib import admin

from config.admin_states import StateChangeAdmin
from config.models import StateChange

admin.site.register(StateChange, StateChangeAdmin)
