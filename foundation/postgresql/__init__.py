"""Django's PostgreSQL backend with a connection health check that costs no round trip
(base.py). settings.database_from_url names it as the ENGINE of every PostgreSQL
database."""
