"""The data side: bar files to training windows, in rooms a newcomer can name.

``read/`` (bar files to validated UTC bars) → ``market/`` (instruments and trading calendars) →
``features/`` (the feature table) → ``scale/`` (fitted on train) → ``windows/`` (splits and the
window dataset) → ``pipeline.py`` (the one bars-or-store switch) and ``prepared.py`` (what
training gets); ``store/`` is the feature store on disk, ``sources/`` the bars that ship with
foxhunt (demo, index data).
"""
