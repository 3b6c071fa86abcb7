from django.contrib.admin.apps import AdminConfig


class ComparatorAdminConfig(AdminConfig):
    default_site = "comparator.admin.ComparatorAdminSite"
