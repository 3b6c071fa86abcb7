"""The workload advisor (issue 7): "where should this workload go, what will it cost per month on Kubernetes, and
what will I have to set up myself?"

One engine (`engine.py`: `advise()`, pure functions over plain data) serves the advisor page (`views.py`) and
`POST /api/v1/advise/` (`api.py`). It reads, below it: `types.py` (the plain data in and out), `sizing.py` (memory
from a model card or a parameter count), `requirements.py` (what a workload needs and the met / missing / unknown
verdicts), `placement.py` (GPU packing, replicas on nodes) and `cost.py` (the monthly cost, rent vs own).
`inputs.py` turns the form's and the serializer's cleaned values into one `WorkloadSpec` and checks rules across
fields; `selectors.py` loads offers and capability cells from the database and hands them to the engine;
`answers.py` gives each offer's Kubernetes answers; `manifests.py` writes the starter Kubernetes manifest for the
chosen offer.
"""
