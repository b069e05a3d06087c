"""The login page: past the limit of failed attempts (`config.login_throttle`, which counts them) it
answers 429 with Retry-After, like the API token endpoint."""

from django.contrib.auth import views as auth_views

from config import login_throttle
from config.client_address import client_address


class LoginView(auth_views.LoginView):
    template_name = "frontend/login.html"
    redirect_authenticated_user = True

    def post(self, request, *args, **kwargs):
        address = client_address(request)
        wait = login_throttle.retry_after(request.POST.get("username", ""), address)
        if wait:
            response = self.render_to_response(self.get_context_data(throttled=login_throttle.message(wait)),
                                               status=429)
            response["Retry-After"] = str(wait)
            return response
        return super().post(request, *args, **kwargs)

    def form_valid(self, form):
        login_throttle.record_success(form.get_user().get_username())
        return super().form_valid(form)
