from src.cart import Cart


def test_compute_total():
    cart = Cart()
    cart.add("KB-101")
    cart.add("MS-201", 2)
    assert cart.compute_total("us") == 18700 + round(18700 * 0.07)
