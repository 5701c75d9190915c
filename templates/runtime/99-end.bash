# The end: all of it was read (the job file checks).
sg_runtime_read=1
