"""The weekly email digest: saved filters, double opt-in subscriptions, the weekly change computation and sending.

Data flows one way into it: providers' selectors and OfferFilterSet are read, nothing in providers is written.
"""
