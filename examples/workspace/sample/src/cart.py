from .pricing import unit_price
from .tax import tax_for


class Cart:
    def __init__(self):
        self.lines = []

    def add(self, sku, quantity=1):
        # TODO: merge lines with the same sku
        self.lines.append((sku, quantity))

    def compute_total(self, region):
        subtotal = sum(unit_price(sku) * qty for sku, qty in self.lines)
        return subtotal + tax_for(region, subtotal)
