"""What a training run costs and how it fits the machine: the run's memory plan (``plan.py``),
the memory of the real ``train_step`` measured in a fresh process (``measure.py``), out-of-memory
back-off by finer micro-batches (``oom.py``) and the CPU threads it uses (``threads.py``)."""
