from .cart import Cart


def receipt(cart: Cart, region):
    total = cart.compute_total(region)
    # TODO: format currencies per region
    return f"TOTAL {total / 100:.2f}"
