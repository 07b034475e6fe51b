# Inventory field ranges (providers.rules at the time of writing) as validators and as
# database constraints; written out once per field rather than per operation.

import django.core.validators
from django.db import migrations, models

MAX_INT = 2147483647
INTEGER_RANGES = [  # field, smallest, largest, default
    ("total", 1, MAX_INT, None),
    ("reserved", 0, MAX_INT, 0),
    ("min_unit", 1, MAX_INT, 1),
    ("max_unit", 1, MAX_INT, MAX_INT),
    ("step_size", 1, MAX_INT, 1),
]
MAX_ALLOCATION_RATIO = 3.40282e+38


def _integer_field(smallest, largest, default):
    extra = {} if default is None else {"default": default}
    return models.IntegerField(validators=[
        django.core.validators.MinValueValidator(smallest),
        django.core.validators.MaxValueValidator(largest)], **extra)


class Migration(migrations.Migration):

    dependencies = [
        ('providers', '0002_verbose_names'),
    ]

    operations = [
        migrations.AlterField(
            model_name='inventory',
            name='allocation_ratio',
            field=models.FloatField(default=1.0, validators=[
                django.core.validators.MaxValueValidator(MAX_ALLOCATION_RATIO)]),
        ),
        *[migrations.AlterField(model_name='inventory', name=field,
                                field=_integer_field(smallest, largest, default))
          for field, smallest, largest, default in INTEGER_RANGES],
        *[migrations.AddConstraint(
            model_name='inventory',
            constraint=models.CheckConstraint(
                condition=models.Q((f'{field}__gte', smallest), (f'{field}__lte', largest)),
                name=f'inventory_{field}_range'))
          for field, smallest, largest, _ in INTEGER_RANGES],
        migrations.AddConstraint(
            model_name='inventory',
            constraint=models.CheckConstraint(
                condition=models.Q(('allocation_ratio__lte', MAX_ALLOCATION_RATIO)),
                name='inventory_allocation_ratio_max'),
        ),
    ]
