"""Django's MySQL backend for MySQL 8.0+ and MariaDB 10.6+ (Galera, InnoDB Cluster)
through PyMySQL (base.py). settings.database_from_url names it as the ENGINE of every
MySQL database, with the entry url.database_entry() builds."""
