"""Fictional codebase for retrieval practice."""


def retry_count(status):
    """Return retry count for a temporary payment failure."""
    return 3 if status == "temporary" else 0


class Invoice:
    def total_with_tax(self, amount, tax_rate):
        """Calculate invoice total including tax."""
        return round(amount * (1 + tax_rate), 2)


async def cancel_order(order_id):
    """Cancel an order and return its identifier."""
    return {"cancelled": order_id}
