RATES = {"eu": 0.20, "us": 0.07}


def tax_for(region, amount):
    return round(amount * RATES.get(region, 0.0))
