"""Each stored Kubernetes answer says how sure it is (`confidence`: documented, third_party or inferred; blank when it
cites no source), which the API gives per answer and the pages mark (~ inferred, ³ a third party's page).

Profiles stored before get it from what they hold: "inferred" from the answer's `inferred`, else "documented" when the
answer cites a source. Whether an answer rests on a third party's page is not stored, so those answers say
"documented" until their provider's answers are recomputed, which every deploy's `load_snapshot` does
(facts_sync.instance_types_sync -> offer_kubernetes_refresh) and every change to a provider's cells or facts does.
New profiles are written with it (kubernetes.Answer.as_dict)."""

from django.db import migrations


def answers_with_confidence(answers: dict) -> dict:
    return {question: ({**entry, "confidence": "inferred" if entry.get("inferred") else
                        ("documented" if entry.get("sources") else "")}
                       if isinstance(entry, dict) and "confidence" not in entry else entry)
            for question, entry in (answers or {}).items()}


def forwards(apps, schema_editor):
    profiles = apps.get_model("providers", "KubernetesProfile")
    # One profile per machine, not per offer: a few thousand at most, held at once.
    changed = []
    for profile in profiles.objects.only("id", "answers"):
        answers = answers_with_confidence(profile.answers)
        if answers != profile.answers:
            profile.answers = answers
            changed.append(profile)
    profiles.objects.bulk_update(changed, ["answers"], batch_size=2000)


class Migration(migrations.Migration):
    dependencies = [("providers", "0028_spot_sold_price_unpublished")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
