"""What a symbol is and when its market trades.

Instruments (tick size, point value, currency, asset class, calendar) resolve from the user's
table (``instrument_table.py``), the built-in futures table (``futures.py``) or a default
(``instruments.py``, ``instrument.py``); contract-coded symbols map to their root
(``contracts.py``). Trading calendars (``calendars.py``: open intervals per exchange) and the
calendar features and bar-time projection built on them (``calendar.py``) live here too, because
both the readers and the features need them.
"""
