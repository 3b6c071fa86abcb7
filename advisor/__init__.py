"""The workload advisor (issue 7): "where should this workload go, what will it cost per month on Kubernetes, and
what will I have to set up myself?"

One engine (`engine.py`, pure functions over plain data) serves the advisor page (`views.py`) and
`POST /api/v1/advise/` (`api.py`); `selectors.py` loads offers and capability cells from the database and hands
them to the engine; `manifests.py` writes the starter Kubernetes manifest for the chosen offer.
"""
