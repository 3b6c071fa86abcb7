"""Each stored Kubernetes answer says whether it rests on an inferred cell or fact (`inferred`, which the API's
offer detail now gives per answer), from the profile's own `inferred` list, so profiles stored before need no new
ingest. New profiles are written with it (kubernetes.Answer.as_dict)."""

from django.db import migrations


def answers_with_inferred(answers: dict, inferred: list) -> dict:
    marked = set(inferred or ())
    return {question: ({**entry, "inferred": question in marked} if isinstance(entry, dict) else entry)
            for question, entry in (answers or {}).items()}


def forwards(apps, schema_editor):
    profiles = apps.get_model("providers", "KubernetesProfile")
    changed = []
    for profile in profiles.objects.only("id", "answers", "inferred").iterator(chunk_size=2000):
        answers = answers_with_inferred(profile.answers, profile.inferred)
        if answers != profile.answers:
            profile.answers = answers
            changed.append(profile)
        if len(changed) >= 2000:
            profiles.objects.bulk_update(changed, ["answers"])
            changed = []
    profiles.objects.bulk_update(changed, ["answers"])


class Migration(migrations.Migration):
    dependencies = [("providers", "0014_data_version_sources")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
