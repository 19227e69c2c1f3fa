from dashboard.cli import run

run()
