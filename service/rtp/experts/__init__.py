"""Strong players and clairvoyant bounds, one module per game family (``STRONG`` and
``CLAIRVOYANT`` in each), registered in ``service.rtp.roster``."""
