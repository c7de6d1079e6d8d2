"""Background work, each task owned by whoever starts it (the server's lifespan, a worker command)."""
